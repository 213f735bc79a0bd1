import type { PageProps } from './page-props';

export function QuotasPage(_props: PageProps) {
  return <h1>Quotas</h1>;
}
