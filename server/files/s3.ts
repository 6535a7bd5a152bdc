import crypto from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import type { S3Settings } from '../config.js';
import { type AttachmentStorage, drain } from '../storage.js';

/** Upload parts: S3's smallest, so an upload holds at most two parts (10 MiB) in memory. */
const PART_BYTES = 5 * 1024 * 1024;

const notFound = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
};

/**
 * Attachments in an S3-compatible bucket through the official SDK, imported here only (this module
 * is loaded when a node stores or reads a file in S3). Downloads stream through formsvc: the bucket
 * stays private and the signed links stay formsvc's.
 */
export async function createS3Storage(s: S3Settings): Promise<AttachmentStorage> {
  const [{ S3Client, GetObjectCommand, DeleteObjectCommand }, { Upload }] = await Promise.all([
    import('@aws-sdk/client-s3'),
    import('@aws-sdk/lib-storage'),
  ]);
  const client = new S3Client({
    endpoint: s.endpoint,
    region: s.region,
    forcePathStyle: s.forcePathStyle,
    // Checksums only where S3 requires them: the SDK's default (a CRC trailer on every upload,
    // aws-chunked) is refused by many S3-compatible stores.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    credentials:
      s.accessKeyId && s.secretAccessKey
        ? { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey }
        : undefined,
  });
  const Bucket = s.bucket;
  return {
    async write(key, source, maxBytes) {
      const body = new PassThrough({ highWaterMark: 64 * 1024 });
      const upload = new Upload({
        client,
        params: { Bucket, Key: key, Body: body },
        partSize: PART_BYTES,
        queueSize: 1,
      });
      const done = upload.done();
      done.catch(() => {}); // observed below; an early failure must not be an unhandled rejection
      const hash = crypto.createHash('sha256');
      let size = 0;
      try {
        // destroyOnReturn false: leaving the loop early must not destroy the caller's stream (see write()).
        for await (const chunk of source.iterator({ destroyOnReturn: false })) {
          const buf: Buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          size += buf.length;
          if (size > maxBytes) {
            drain(source);
            await upload.abort().catch(() => {});
            body.destroy();
            return { sizeBytes: size, sha256: '', tooLarge: true, key };
          }
          hash.update(buf);
          if (!body.write(buf)) await Promise.race([once(body, 'drain'), done]);
        }
        body.end();
        await done;
        return { sizeBytes: size, sha256: hash.digest('hex'), tooLarge: false, key };
      } catch (err) {
        await upload.abort().catch(() => {});
        body.destroy();
        throw err;
      }
    },
    read(key) {
      return Readable.from(
        (async function* () {
          const res = await client.send(new GetObjectCommand({ Bucket, Key: key })).catch((err) => {
            throw notFound(err) ? Object.assign(new Error(`no stored file ${key}`), { code: 'ENOENT' }) : err;
          });
          yield* res.Body as Readable;
        })(),
        { objectMode: false },
      );
    },
    async remove(key) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
      } catch (err) {
        if (!notFound(err)) throw err;
      }
    },
  };
}
