export * from './control-keys';
export * from './control-signature';
export * from './control-sequence';
export * from './entry-opener';
export * from './signed-messages';
