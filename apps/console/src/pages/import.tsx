import { useState } from 'preact/hooks';
import { ConsoleError, asConsoleError, type FieldIssue } from '../api/errors';
import { ImportConfigDocument, type ImportFormat } from '../api/generated';
import { ErrorBanner } from '../ui/error-banner';
import { SelectField } from '../ui/controls';
import { Field } from '../ui/field';
import { DocumentField } from './import/document-field';
import { MAX_DOCUMENT_BYTES, documentIssues, isDocumentIssue } from './import/document-issues';
import { ImportResultView, type ImportResult } from './import/import-result';
import type { PageProps } from './page-props';

const FORMATS: readonly (readonly [ImportFormat, string])[] = [
  ['yaml', 'YAML (native or go-ratelimit)'],
  ['gocc', 'GoCC'],
];

const FILE_FIELD = 'file';

/** Imports a config document (all of it or nothing); admin token only. */
export function ImportPage(props: PageProps) {
  if (!props.session.canWrite) {
    return (
      <>
        <h1>Import</h1>
        <p>Importing needs the admin token: log in with it to import a config document.</p>
      </>
    );
  }
  return <ImportForm {...props} />;
}

function ImportForm(props: PageProps) {
  const { api } = props.session;
  const [document, setDocument] = useState('');
  const [format, setFormat] = useState<ImportFormat>('yaml');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<ImportResult | undefined>(undefined);
  const [error, setError] = useState<ConsoleError | undefined>(undefined);
  const [fileIssues, setFileIssues] = useState<readonly FieldIssue[]>([]);

  const readFile = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    if (file === undefined) return;
    if (file.size > MAX_DOCUMENT_BYTES) {
      setFileIssues([{ field: FILE_FIELD, message: 'is over 4 MiB, the most the admin takes' }]);
      return;
    }
    try {
      setDocument(await file.text());
      setFileIssues([]);
    } catch {
      setFileIssues([{ field: FILE_FIELD, message: 'could not be read' }]);
    }
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setResult(undefined);
    try {
      const { importConfig } = await api.request(ImportConfigDocument, { document, format });
      setError(undefined);
      setResult(importConfig);
    } catch (e) {
      setError(asConsoleError(e));
    } finally {
      setBusy(false);
    }
  };

  const issues = error?.issues ?? [];
  const atDocument = documentIssues(issues);
  const elsewhere = issues.filter((i) => !isDocumentIssue(i));
  // Issues all shown under the document need only a short word above the form.
  const bannerError =
    error !== undefined && issues.length > 0 && elsewhere.length === 0
      ? new ConsoleError('Nothing was imported: see the issues under Document.', error.code)
      : error;

  return (
    <>
      <h1>Import</h1>
      <p class="muted">
        A config document is imported whole or not at all; what it changes is in the audit log.
      </p>
      <form onSubmit={(e) => void submit(e)} aria-label="Import a config document">
        <ErrorBanner error={bannerError} issues={elsewhere} />
        <DocumentField value={document} onInput={setDocument} issues={atDocument} />
        <div class="row">
          <Field label="Upload a file" path={FILE_FIELD} issues={fileIssues}>
            {(control) => (
              <input
                {...control}
                type="file"
                accept=".yaml,.yml,.json,text/yaml,application/json"
                onChange={(e) => void readFile(e.currentTarget)}
              />
            )}
          </Field>
          <SelectField label="Format" options={FORMATS} value={format} onChange={setFormat} />
          <div class="field">
            <button type="submit" disabled={busy}>
              Import
            </button>
          </div>
        </div>
      </form>
      <div role="status">{result !== undefined && <ImportResultView result={result} />}</div>
    </>
  );
}
