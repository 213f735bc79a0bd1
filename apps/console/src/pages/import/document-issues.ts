/**
 * The admin names a problem inside an imported document `document: quotas[0].limits[1].window`
 * (or just `document`). The form shows those under the Document field, each with where it is.
 */
import type { FieldIssue } from '../../api/errors';

export const DOCUMENT_FIELD = 'document';

/** Whether the issue is about the document's content. */
export function isDocumentIssue(issue: FieldIssue): boolean {
  return issue.field === DOCUMENT_FIELD || issue.field.startsWith(`${DOCUMENT_FIELD}:`);
}

/** The document's issues, all on the `document` field, each message led by its place in it. */
export function documentIssues(issues: readonly FieldIssue[]): FieldIssue[] {
  return issues.filter(isDocumentIssue).map((issue) => {
    const where = issue.field.slice(DOCUMENT_FIELD.length).replace(/^:\s*/, '');
    return {
      field: DOCUMENT_FIELD,
      message: where === '' ? issue.message : `${where}: ${issue.message}`,
    };
  });
}

/** What the admin refuses, to say so before a large file is sent. */
export const MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;
