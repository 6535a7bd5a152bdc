import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from '@20minutes/s3rver';

/**
 * An S3-compatible server in this process on loopback (s3rver: the S3 REST API over a folder), with
 * one bucket, and the S3_* settings that point formsvc at it.
 */
export async function startS3() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-s3-'));
  const bucket = 'formsvc-test';
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  return {
    dir,
    bucket,
    env: {
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    /** The objects in the bucket (s3rver keeps each as a file, with a metadata file beside it). */
    objects: () =>
      (fs.readdirSync(path.join(dir, bucket), { recursive: true }) as string[]).filter(
        (f) =>
          !f.endsWith('._S3rver_metadata.json') &&
          !f.endsWith('._S3rver_object.md5') &&
          fs.statSync(path.join(dir, bucket, f)).isFile(),
      ),
    async close() {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
