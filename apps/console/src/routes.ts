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

/** The Keys page looking up `key` (in `quota`): `#/keys?quota=api&key=alice`. */
export function keysHref(key: string, quota?: string): string {
  const params = new URLSearchParams();
  if (quota !== undefined) params.set('quota', quota);
  params.set('key', key);
  return `#/keys?${params.toString()}`;
}

/** The key (and quota) a Keys page address names, or undefined when it names no key. */
export function keysQueryOf(hash: string): { key: string; quota?: string } | undefined {
  if (pageOf(hash) !== 'keys') return undefined;
  const at = hash.indexOf('?');
  if (at < 0) return undefined;
  const params = new URLSearchParams(hash.slice(at + 1));
  const key = params.get('key');
  if (key === null || key === '') return undefined;
  const quota = params.get('quota');
  return quota === null || quota === '' ? { key } : { key, quota };
}
