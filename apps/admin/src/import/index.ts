/** The parsers behind the admin mutation `importConfig(document, format)`. */
export {
  IMPORT_FORMATS,
  IMPORT_SOURCE,
  MAX_IMPORT_DOCUMENT_BYTES,
  type ImportFormat,
  type ImportOptions,
  type ImportPlan,
} from './import-plan';
export { parseImport } from './parse-import';
