/** A JSON object as read from the wire or a jsonb column. */
export type Obj = Record<string, unknown>;

/** Whether v is a plain object: not null, not an array. */
export const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** v when it is a plain object, else an empty one (reading optional parts of a payload). */
export const objOf = (v: unknown): Obj => (isObj(v) ? v : {});
