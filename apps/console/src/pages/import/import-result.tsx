import type { ImportConfigMutation } from '../../api/generated';
import { count } from '../../ui/format';

export type ImportResult = ImportConfigMutation['importConfig'];

function names(list: readonly string[]): string {
  return list.length === 0 ? 'none' : list.join(', ');
}

/** What an import changed, and what it approximated or skipped. */
export function ImportResultView(props: { result: ImportResult }) {
  const { result } = props;
  const usage = result.usageRecorded + result.usageFailed > 0;
  return (
    <div class="banner ok">
      <p>
        <strong>Imported from {result.source}</strong>
      </p>
      <dl class="facts">
        <div class="wide">
          <dt>Quotas created or changed</dt>
          <dd>{names(result.quotas)}</dd>
        </div>
        <div class="wide">
          <dt>Providers enabled or changed</dt>
          <dd>{names(result.providers)}</dd>
        </div>
        {usage && (
          <div class="wide">
            <dt>Usage entries</dt>
            <dd>
              {count(result.usageRecorded)} recorded on the limiters
              {result.usageFailed > 0 && `, ${count(result.usageFailed)} no limiter took`}
            </dd>
          </div>
        )}
      </dl>
      {result.notes.length > 0 && (
        <>
          <p>Notes:</p>
          <ul class="notes">
            {result.notes.map((note, i) => (
              <li key={i}>{note}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
