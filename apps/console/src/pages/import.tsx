import type { PageProps } from './page-props';

export function ImportPage(_props: PageProps) {
  return <h1>Import</h1>;
}
