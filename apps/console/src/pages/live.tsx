import type { PageProps } from './page-props';

export function LivePage(_props: PageProps) {
  return <h1>Live</h1>;
}
