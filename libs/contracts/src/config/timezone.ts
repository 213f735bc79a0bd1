/** IANA names only (`Europe/Stockholm`, `UTC`); offsets such as `+01:00` are not zones. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;
const checked = new Map<string, boolean>();

/** True when the runtime's ICU knows the zone, which is what calendar windows will use. */
export function isIanaTimeZone(zone: string): boolean {
  const known = checked.get(zone);
  if (known !== undefined) return known;
  let valid = ZONE_NAME.test(zone);
  if (valid) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
    } catch {
      valid = false;
    }
  }
  if (checked.size < 1000) checked.set(zone, valid);
  return valid;
}
