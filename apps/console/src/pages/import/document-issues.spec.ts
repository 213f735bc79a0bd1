import { documentIssues, isDocumentIssue } from './document-issues';

describe('documentIssues', () => {
  it('puts every issue inside the document on the document field, led by where it is', () => {
    expect(
      documentIssues([
        { field: 'document', message: 'line 3: not YAML' },
        { field: 'document: quotas[0].limits[1].window', message: 'must be a duration' },
        { field: 'format', message: 'unknown' },
      ]),
    ).toEqual([
      { field: 'document', message: 'line 3: not YAML' },
      { field: 'document', message: 'quotas[0].limits[1].window: must be a duration' },
    ]);
  });

  it('claims no field that only starts with the same letters', () => {
    expect(isDocumentIssue({ field: 'documents', message: 'x' })).toBe(false);
    expect(isDocumentIssue({ field: 'format', message: 'x' })).toBe(false);
  });
});
