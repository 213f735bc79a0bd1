import type { PageProps } from './page-props';

export function KeysPage(_props: PageProps) {
  return <h1>Keys</h1>;
}
