import type { PageProps } from './page-props';

export function AuditPage(_props: PageProps) {
  return <h1>Audit</h1>;
}
