import { describeChange, diffJson, parseJson } from '../../audit/diff';
import type { AuditLogQuery } from '../../api/generated';
import { instant } from '../../ui/format';

export type AuditEntry = AuditLogQuery['auditLog'][number];

/** Lines shown before "and N more": the full documents are one click away. */
const MOST_LINES = 12;

const CHANGE_CLASS = { changed: undefined, added: 'diff-added', removed: 'diff-removed' } as const;

function pretty(json: string | null): string {
  const value = parseJson(json);
  return value === undefined ? 'none' : JSON.stringify(value, null, 2);
}

/** One change: when, who, what, and the paths it changed (both documents in a disclosure). */
export function AuditRow(props: { entry: AuditEntry }) {
  const { entry } = props;
  const changes = diffJson(entry.before, entry.after);
  const shown = changes.slice(0, MOST_LINES);
  return (
    <tr>
      <td class="nowrap" data-label="Time">
        <time dateTime={entry.at}>{instant(entry.at)}</time>
      </td>
      <td data-label="Actor">{entry.actor}</td>
      <td data-label="Action">{entry.action}</td>
      <td data-label="Target">
        <code>{entry.target}</code>
      </td>
      <td class="changes" data-label="Changes">
        <div>
          {changes.length === 0 ? (
            <span class="muted">no change</span>
          ) : (
            <ul>
              {shown.map((c) => (
                <li key={c.path + c.kind} class={CHANGE_CLASS[c.kind]}>
                  <code>{describeChange(c)}</code>
                </li>
              ))}
              {changes.length > shown.length && (
                <li class="muted">and {changes.length - shown.length} more</li>
              )}
            </ul>
          )}
          <details>
            <summary>Show full JSON</summary>
            <div class="json-pair">
              <figure>
                <figcaption>Before</figcaption>
                <pre>{pretty(entry.before)}</pre>
              </figure>
              <figure>
                <figcaption>After</figcaption>
                <pre>{pretty(entry.after)}</pre>
              </figure>
            </div>
          </details>
        </div>
      </td>
    </tr>
  );
}
