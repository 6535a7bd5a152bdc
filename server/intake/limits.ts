/** Bounds of a submission body; documented in llms.txt. */
export const INTAKE_LIMITS = {
  /** JSON and urlencoded bodies. */
  bodyBytes: 256 * 1024,
  /** multipart aggregate ceiling (all parts). */
  multipartBytes: 16 * 1024 * 1024,
  /** keys at any level, counted over the whole body. */
  fields: 500,
  /** object/array nesting depth. */
  depth: 16,
  /** longest key. */
  keyLength: 256,
  /** one multipart text field. */
  fieldBytes: 256 * 1024,
} as const;
