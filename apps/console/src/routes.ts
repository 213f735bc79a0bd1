/** The console's pages, addressed by the URL's hash (#/quotas) so the admin serves one document. */
export const PAGES = [
  { path: 'live', title: 'Live' },
  { path: 'quotas', title: 'Quotas' },
  { path: 'providers', title: 'Providers' },
  { path: 'keys', title: 'Keys' },
  { path: 'audit', title: 'Audit' },
  { path: 'import', title: 'Import' },
] as const;

export type PagePath = (typeof PAGES)[number]['path'];

/** `#/quotas` -> quotas; anything else -> live. */
export function pageOf(hash: string): PagePath {
  const path = hash.replace(/^#\/?/, '').split(/[/?]/)[0];
  return PAGES.find((p) => p.path === path)?.path ?? 'live';
}
