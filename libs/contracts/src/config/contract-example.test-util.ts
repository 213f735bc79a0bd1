import { codeBlockUnder } from '../contract-doc/markdown.test-util';

/**
 * The example config file of docs/contract.md, read from it: tests of every reader start from it.
 */
export const CONTRACT_CONFIG_EXAMPLE = codeBlockUnder('docs/contract.md', '## Config file', 'yaml');
