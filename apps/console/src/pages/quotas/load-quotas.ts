import type { QuotaFieldsFragment } from '../../api/generated';

/**
 * 100 quotas with every field stay well under the admin's query cost even when a quota has
 * dozens of limits; the whole list at once may not.
 */
export const QUOTA_PAGE = 100;

/** Every quota, a page at a time by name (`after` = the last name of the previous page). */
export async function loadAllQuotas(
  page: (first: number, after: string | undefined) => Promise<readonly QuotaFieldsFragment[]>,
): Promise<QuotaFieldsFragment[]> {
  const all: QuotaFieldsFragment[] = [];
  let after: string | undefined;
  for (;;) {
    const quotas = await page(QUOTA_PAGE, after);
    all.push(...quotas);
    const last = quotas[quotas.length - 1];
    if (quotas.length < QUOTA_PAGE || last === undefined) return all;
    after = last.name;
  }
}
