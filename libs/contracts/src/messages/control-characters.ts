/** C0 (U+0000..U+001F), DEL (U+007F) and C1 (U+0080..U+009F): never allowed in keys or patterns. */
// eslint-disable-next-line no-control-regex -- finding control characters is this regex's job
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
