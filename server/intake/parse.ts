import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import busboy from 'busboy';
import { newId } from '../../shared/ids.js';
import { ApiError } from '../core/errors.js';
import type { AttachmentStorage } from '../storage.js';
import { INTAKE_LIMITS } from './limits.js';

export type Fields = Record<string, unknown>;

export interface StoredFile {
  id: string;
  fieldName: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  storageKey: string;
}

export interface Parsed {
  fields: Fields;
  files: StoredFile[];
  encoding: 'json' | 'urlencoded' | 'multipart';
}

export interface FileRules {
  orgId: string;
  storage: AttachmentStorage;
  /** null: this form takes no files (sandbox). */
  maxFileBytes: number | null;
  maxFiles: number;
}

const tooLarge = (message: string) => new ApiError('payload_too_large', message, { headers: { Connection: 'close' } });

const malformed = (message: string) =>
  new ApiError('bad_request', message, {
    hint: 'Send a JSON object, an urlencoded body or multipart/form-data, well-formed.',
  });

export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase();
}

/**
 * Reads a body up to `max` bytes; more answers 413 before anything is stored. A leading byte-order
 * mark is dropped for JSON (an editor's, never data) and kept for a form-encoded body, where it is
 * the first character of the first key as sent. `incoming`: the Node request under `req`, when
 * Node's HTTP server took it (see bufferedBody).
 */
async function readCapped(req: Request, max: number, keepBom = false, incoming?: IncomingMessage): Promise<string> {
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: keepBom });
  const length = incoming ? (incoming.headers['content-length'] ?? null) : req.headers.get('content-length');
  const declared = Number(length);
  if (Number.isFinite(declared) && declared > max) throw tooLarge(`The body is larger than ${max / 1024} KB.`);
  // A declared length within the cap is all the HTTP parser lets through: read it whole (from the
  // parser's buffer when it holds it all, else on @hono/node-server straight from the socket,
  // without building a web stream).
  if (length !== null && Number.isInteger(declared) && declared >= 0) {
    const whole = bufferedBody(incoming, declared);
    return decoder.decode(whole ?? (await req.arrayBuffer()));
  }
  if (!req.body) return '';
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw tooLarge(`The body is larger than ${max / 1024} KB.`);
    }
    chunks.push(value);
  }
  return decoder.decode(Buffer.concat(chunks));
}

/**
 * The whole body of a Node request when the HTTP parser already holds all of its declared length
 * (nearly every form post: its headers and body come in together), taken from that buffer at once.
 * Read as a stream instead (listeners, a `data` and an `end` event, a promise), it took about 75 µs
 * of an intake answer at 50 posts a second, against about 25 µs this way (docs/performance.md). The parser never gives a
 * message more than its Content-Length, so what is buffered is the body, whole. Null when the body
 * is not all there yet, or something has read from it: then it is read as a stream, as before.
 */
export function bufferedBody(incoming: IncomingMessage | undefined, declared: number): Buffer | null {
  if (!incoming || declared === 0 || incoming.readableDidRead || incoming.readableEncoding !== null) return null;
  if (incoming.readableLength !== declared) return null;
  const chunk: unknown = incoming.read();
  return Buffer.isBuffer(chunk) ? chunk : null;
}

/**
 * Walks a parsed body: bounds on field count, depth and key length; strings made well-formed
 * (PostgreSQL rejects lone surrogates); NUL characters and numbers beyond the double range refused
 * (jsonb cannot hold the first, and JSON.parse turns the second into Infinity, stored as null).
 */
export function sanitize(value: unknown, state = { fields: 0 }, depth = 0): unknown {
  if (depth > INTAKE_LIMITS.depth) throw tooLarge(`The body nests deeper than ${INTAKE_LIMITS.depth} levels.`);
  if (typeof value === 'string') return clean(value);
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw malformed('The body has a number beyond the range that can be stored (about ±1.8e308).');
  }
  if (Array.isArray(value)) {
    state.fields += value.length;
    if (state.fields > INTAKE_LIMITS.fields) throw tooLarge(`The body has more than ${INTAKE_LIMITS.fields} fields.`);
    return value.map((v) => sanitize(v, state, depth + 1));
  }
  if (value && typeof value === 'object') {
    const out: Fields = {};
    for (const [k, v] of Object.entries(value)) {
      state.fields += 1;
      if (state.fields > INTAKE_LIMITS.fields) throw tooLarge(`The body has more than ${INTAKE_LIMITS.fields} fields.`);
      if (k.length > INTAKE_LIMITS.keyLength) throw tooLarge(`A field name is longer than ${INTAKE_LIMITS.keyLength}.`);
      setOwn(out, clean(k), sanitize(v, state, depth + 1));
    }
    return out;
  }
  return value;
}

function clean(s: string): string {
  if (s.includes('\u0000')) throw malformed('The body contains NUL characters, which cannot be stored.');
  return s.toWellFormed();
}

/**
 * An own data property, whatever the key: plain assignment (fast) for every key but `__proto__`,
 * whose assignment would set the object's prototype instead of storing a field.
 */
export function setOwn(obj: Fields, key: string, value: unknown) {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else obj[key] = value;
}

/** Repeated keys become arrays; single keys stay strings. */
function addField(fields: Fields, name: string, value: unknown) {
  if (!Object.hasOwn(fields, name)) setOwn(fields, name, value);
  else if (Array.isArray(fields[name])) (fields[name] as unknown[]).push(value);
  else setOwn(fields, name, [fields[name], value]);
}

/**
 * Parses a submission body by its Content-Type: JSON object, urlencoded, or multipart with files.
 * `incoming`: the Node request under `req`, when there is one (a JSON or form-encoded body is then
 * taken from the parser's buffer when it is all there).
 */
export async function parseSubmission(req: Request, files: FileRules, incoming?: IncomingMessage): Promise<Parsed> {
  const type = mediaType(incoming ? incoming.headers['content-type'] : (req.headers.get('content-type') ?? undefined));
  if (type === 'application/json' || type.endsWith('+json')) {
    const text = await readCapped(req, INTAKE_LIMITS.bodyBytes, false, incoming);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw malformed('The body is not valid JSON.');
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw malformed('The JSON body must be an object.');
    return { fields: sanitize(body) as Fields, files: [], encoding: 'json' };
  }
  if (type === 'application/x-www-form-urlencoded') {
    const text = await readCapped(req, INTAKE_LIMITS.bodyBytes, true, incoming);
    const fields: Fields = {};
    for (const [k, v] of new URLSearchParams(text)) addField(fields, k, v);
    return { fields: sanitize(fields) as Fields, files: [], encoding: 'urlencoded' };
  }
  if (type === 'multipart/form-data') return parseMultipart(req, files);
  throw new ApiError(
    'unsupported_media_type',
    type ? `Content-Type ${type} is not accepted.` : 'The request has no Content-Type.',
  );
}

/** What a multipart parse has collected so far, and its first failure, which ends it. */
interface Collected {
  fields: Fields;
  stored: StoredFile[];
  writes: Promise<void>[];
  failure: ApiError | null;
}

function fail(c: Collected, err: ApiError) {
  c.failure ??= err;
}

const fileLimit = (message: string) =>
  new ApiError('attachment_limit_reached', message, { headers: { Connection: 'close' } });

async function parseMultipart(req: Request, rules: FileRules): Promise<Parsed> {
  const declared = Number(req.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > INTAKE_LIMITS.multipartBytes) {
    throw tooLarge('The multipart body is larger than 16 MiB.');
  }
  if (!req.body) throw malformed('The multipart body is empty.');
  const bb = multipartParser(req, rules);
  const c: Collected = { fields: {}, stored: [], writes: [], failure: null };
  let total = 0;
  const source = Readable.fromWeb(req.body as import('node:stream/web').ReadableStream);
  const counted = source.on('data', (chunk: Buffer) => {
    total += chunk.length;
    if (total > INTAKE_LIMITS.multipartBytes) {
      fail(c, tooLarge('The multipart body is larger than 16 MiB.'));
      source.destroy();
    }
  });
  // busboy reports an empty or missing part name as undefined (whatever its types say): such a part
  // is kept under the empty key, as `=value` is in urlencoded bodies.
  bb.on('field', (partName, value, info) => {
    const name = partName ?? '';
    if (info.valueTruncated) fail(c, tooLarge(`Field ${name} is larger than ${INTAKE_LIMITS.fieldBytes / 1024} KB.`));
    addField(c.fields, name, value);
  });
  bb.on('file', (partName, stream, info) => onFile(c, rules, partName ?? '', stream, info));
  bb.on('filesLimit', () => fail(c, fileLimit(`At most ${rules.maxFiles} files per submission.`)));
  bb.on('fieldsLimit', () => fail(c, tooLarge(`The body has more than ${INTAKE_LIMITS.fields} fields.`)));
  bb.on('partsLimit', () => fail(c, tooLarge('The multipart body has too many parts.')));
  try {
    await new Promise<void>((resolve, reject) => {
      bb.on('close', resolve);
      bb.on('error', (err) => reject(err));
      counted.on('error', (err) => reject(err));
      counted.on('close', () => {
        if (c.failure) resolve();
      });
      counted.pipe(bb);
    });
    await Promise.all(c.writes);
  } catch (err) {
    await Promise.allSettled(c.writes);
    if (!c.failure) fail(c, malformed(`The multipart body is malformed: ${(err as Error).message}`));
  }
  if (c.failure) {
    await Promise.all(c.stored.map((f) => rules.storage.remove(f.storageKey).catch(() => {})));
    throw c.failure;
  }
  // A file part's value is its fl_ id itself. (An in-band {$file: id} placeholder swapped by a JSON
  // reviver also matched a text field named "$file", and the fields object around it.)
  return { fields: sanitize(c.fields) as Fields, files: c.stored, encoding: 'multipart' };
}

function multipartParser(req: Request, rules: FileRules): busboy.Busboy {
  try {
    return busboy({
      headers: { 'content-type': req.headers.get('content-type') ?? '' },
      // Browsers write part names and filenames in UTF-8 (HTML multipart/form-data encoding);
      // busboy's default, latin1, would store "résumé" as "rÃ©sumÃ©".
      defParamCharset: 'utf8',
      limits: {
        fieldSize: INTAKE_LIMITS.fieldBytes,
        fields: INTAKE_LIMITS.fields,
        files: rules.maxFiles + 1,
        parts: INTAKE_LIMITS.fields + rules.maxFiles + 1,
        fieldNameSize: INTAKE_LIMITS.keyLength,
      },
    });
  } catch {
    throw malformed('The multipart body has no boundary.');
  }
}

/** One file part: written to storage within the rules, or drained when the parse has failed or takes no more. */
function onFile(c: Collected, rules: FileRules, name: string, stream: Readable, info: busboy.FileInfo) {
  // When the body ends mid-file busboy destroys this stream with an error (and fails the parse
  // itself too). Until storage reads it, or when it is only drained, nothing else listens, and an
  // unheard 'error' would be thrown as an uncaught exception: one truncated request would kill the process.
  stream.on('error', () => {});
  if (!c.failure && rules.maxFileBytes === null) fail(c, fileLimit('This form accepts no files.'));
  if (!c.failure && c.stored.length + c.writes.length >= rules.maxFiles) {
    fail(c, fileLimit(`At most ${rules.maxFiles} files per submission.`));
  }
  const maxBytes = rules.maxFileBytes;
  if (c.failure || maxBytes === null) {
    stream.resume();
    return;
  }
  const id = newId('file');
  const key = `${rules.orgId}/${id}`;
  c.writes.push(
    rules.storage.write(key, stream, maxBytes).then((r) => {
      if (r.tooLarge) {
        fail(
          c,
          new ApiError('attachment_too_large', `File ${info.filename} is larger than ${maxBytes} bytes.`, {
            headers: { Connection: 'close' },
          }),
        );
        return;
      }
      c.stored.push({
        id,
        fieldName: name,
        filename: (info.filename || 'file').toWellFormed().replaceAll('\u0000', ''),
        contentType: info.mimeType || 'application/octet-stream',
        sizeBytes: r.sizeBytes,
        sha256: r.sha256,
        storageKey: r.key,
      });
      addField(c.fields, name, id);
    }),
  );
}
