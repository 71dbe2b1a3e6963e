import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { isCheckpointId, isContentHash } from './manifest';
import { checkName, tooLarge, WHAT, type ObjectKind, type ObjectStore, type StoredObject } from './objects';
import { CheckpointMissingError } from './store';

/**
 * Checkpoint objects in S3-compatible storage (AWS S3, Cloudflare R2, GCS's S3 API, MinIO,
 * SeaweedFS) through the official AWS SDK: `<prefix>/blobs/<hash>` and `<prefix>/manifests/<id>`.
 *
 * Write-once: a PUT with `If-None-Match: *` (AWS S3, R2, MinIO and SeaweedFS implement it), so an
 * object that exists is never rewritten and two workers racing on one name cannot overwrite each
 * other (a 412 means the other won; equal names hold equal plaintext). The recorder asks `has` (a
 * HEAD) before it reads a content, which is what makes an incremental checkpoint upload only new
 * contents. A server that answers the condition with 501 gets a HEAD and a plain PUT from then on.
 *
 * Bounded: each request has a connect and a response timeout, the SDK retries a few times, and a
 * whole call is aborted after `callTimeoutMs`, so a dead or killed store fails a call in seconds
 * (the caller records the checkpoint later) rather than wedging a worker. A read refuses an object
 * over its bound before and while downloading it.
 */

export interface S3ObjectsOptions {
  bucket: string;
  /** Key prefix without leading or trailing slash; '' for the bucket's root. */
  prefix: string;
  /** `AWS_ENDPOINT_URL` (MinIO, SeaweedFS, R2…); path-style addressing is used with one. */
  endpoint?: string;
  region?: string;
  /** Explicit credentials; otherwise the SDK's standard chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profiles…). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Attempts per request, the first included (default 3). */
  maxAttempts?: number;
  /** TCP connect timeout per attempt (default 3 s). */
  connectTimeoutMs?: number;
  /** No response (or no data) for this long fails an attempt (default 15 s). */
  requestTimeoutMs?: number;
  /** A whole call, retries included, is aborted after this (default 30 s). */
  callTimeoutMs?: number;
}

export const S3_DEFAULTS = { maxAttempts: 3, connectTimeoutMs: 3000, requestTimeoutMs: 15_000, callTimeoutMs: 30_000 };

export class S3Objects implements ObjectStore {
  readonly description: string;
  private readonly client: S3Client;
  private readonly callTimeoutMs: number;
  private conditionalPut = true;

  constructor(private readonly options: S3ObjectsOptions) {
    this.description = `s3://${options.bucket}${options.prefix ? `/${options.prefix}` : ''}`;
    this.callTimeoutMs = options.callTimeoutMs ?? S3_DEFAULTS.callTimeoutMs;
    const config: S3ClientConfig = {
      region: options.region ?? 'us-east-1',
      maxAttempts: options.maxAttempts ?? S3_DEFAULTS.maxAttempts,
      requestHandler: {
        connectionTimeout: options.connectTimeoutMs ?? S3_DEFAULTS.connectTimeoutMs,
        requestTimeout: options.requestTimeoutMs ?? S3_DEFAULTS.requestTimeoutMs,
        // Without it the SDK only logs a warning and keeps waiting.
        throwOnRequestTimeout: true,
      },
      // Contents are verified by their SHA-256 name; no extra checksum round on every request.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    if (options.endpoint) {
      config.endpoint = options.endpoint;
      config.forcePathStyle = true;
    }
    if (options.credentials) config.credentials = options.credentials;
    this.client = new S3Client(config);
  }

  /** Close the client's sockets (tests, a worker shutting down). */
  destroy(): void {
    this.client.destroy();
  }

  key(kind: ObjectKind, name: string): string {
    checkName(kind, name);
    const rest = `${kind === 'blob' ? 'blobs' : 'manifests'}/${name}`;
    return this.options.prefix ? `${this.options.prefix}/${rest}` : rest;
  }

  async has(kind: ObjectKind, name: string): Promise<boolean> {
    const Key = this.key(kind, name);
    try {
      await this.call('HEAD', Key, (abortSignal) =>
        this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key }), { abortSignal }),
      );
      return true;
    } catch (error) {
      if (status(error) === 404) return false;
      throw error;
    }
  }

  async put(kind: ObjectKind, name: string, bytes: Buffer): Promise<void> {
    const Key = this.key(kind, name);
    // Callers ask `has` before reading and hashing a content; the conditional PUT makes a second HEAD
    // needless. Without the condition, a HEAD keeps an existing object from being rewritten.
    if (!this.conditionalPut && (await this.has(kind, name))) return;
    const send = (conditional: boolean) =>
      this.call('PUT', Key, (abortSignal) =>
        this.client.send(
          new PutObjectCommand({
            Bucket: this.options.bucket,
            Key,
            Body: bytes,
            ContentLength: bytes.length,
            ContentType: 'application/octet-stream',
            ...(conditional ? { IfNoneMatch: '*' } : {}),
          }),
          { abortSignal },
        ),
      );
    try {
      await send(this.conditionalPut);
    } catch (error) {
      const code = status(error);
      // 412: another writer stored this name first. 409: a concurrent conditional write is in flight.
      if (code === 412 || code === 409) return;
      if (this.conditionalPut && code === 501) {
        this.conditionalPut = false;
        if (!(await this.has(kind, name))) await send(false);
        return;
      }
      throw error;
    }
  }

  async get(kind: ObjectKind, name: string, maxBytes: number): Promise<Buffer> {
    const Key = this.key(kind, name);
    return this.call('GET', Key, async (abortSignal) => {
      let answer;
      try {
        answer = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key }), { abortSignal });
      } catch (error) {
        if (status(error) === 404) throw new CheckpointMissingError(WHAT[kind], name);
        throw error;
      }
      const body = answer.Body as Readable | undefined;
      if (!body) throw new Error(`The checkpoint store ${this.description} answered GET ${Key} with no body.`);
      if (answer.ContentLength !== undefined && answer.ContentLength > maxBytes) {
        body.destroy();
        throw tooLarge(this.description, kind, name, answer.ContentLength, maxBytes);
      }
      // The deadline covers the download too: a server that stalls mid-body does not hold the call.
      const onAbort = () => body.destroy(new Error('the download was cut at the deadline'));
      abortSignal.addEventListener('abort', onAbort, { once: true });
      const chunks: Buffer[] = [];
      let total = 0;
      try {
        for await (const chunk of body) {
          total += (chunk as Buffer).length;
          if (total > maxBytes) {
            body.destroy();
            throw tooLarge(this.description, kind, name, total, maxBytes);
          }
          chunks.push(chunk as Buffer);
        }
      } finally {
        abortSignal.removeEventListener('abort', onAbort);
      }
      return Buffer.concat(chunks, total);
    });
  }

  /** Every object under the kind's prefix with a valid name, a page (up to 1000) per request. */
  async *list(kind: ObjectKind): AsyncGenerator<StoredObject> {
    const folder = `${kind === 'blob' ? 'blobs' : 'manifests'}/`;
    const Prefix = this.options.prefix ? `${this.options.prefix}/${folder}` : folder;
    let token: string | undefined;
    do {
      const page = await this.call('LIST', Prefix, (abortSignal) =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix, ContinuationToken: token }), {
          abortSignal,
        }),
      );
      for (const item of page.Contents ?? []) {
        const name = (item.Key ?? '').slice(Prefix.length);
        if (!(kind === 'blob' ? isContentHash(name) : isCheckpointId(name))) continue;
        yield { name, modifiedMs: item.LastModified?.getTime() ?? 0, size: item.Size ?? 0 };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async delete(kind: ObjectKind, name: string): Promise<void> {
    const Key = this.key(kind, name);
    try {
      await this.call('DELETE', Key, (abortSignal) =>
        this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key }), { abortSignal }),
      );
    } catch (error) {
      if (status(error) !== 404) throw error;
    }
  }

  /** One SDK call under the whole-call deadline, its errors rewritten to say which store and object. */
  private async call<T>(op: string, key: string, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const signal = AbortSignal.timeout(this.callTimeoutMs);
    try {
      return await run(signal);
    } catch (error) {
      const code = status(error);
      // Answers the callers handle themselves (absent, already written, condition not implemented).
      if (code === 404 || code === 409 || code === 412 || code === 501) throw error;
      if (error instanceof CheckpointMissingError || (error as Error).message?.startsWith('The checkpoint store ')) {
        throw error;
      }
      const why = signal.aborted ? `no answer within ${Math.round(this.callTimeoutMs / 1000)} s` : describe(error);
      const failure = new Error(`The checkpoint store ${this.description} failed ${op} ${key}: ${why}.`);
      (failure as Error & { status?: number }).status = code;
      throw failure;
    }
  }
}

function status(error: unknown): number | undefined {
  if (error instanceof S3ServiceException) return error.$metadata?.httpStatusCode;
  const meta = (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata;
  return typeof meta?.httpStatusCode === 'number' ? meta.httpStatusCode : undefined;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error).slice(0, 300);
  const code = (error as NodeJS.ErrnoException).code;
  const httpStatus = status(error);
  const parts = [error.name !== 'Error' ? error.name : undefined, code, httpStatus ? `HTTP ${httpStatus}` : undefined];
  const label = parts.filter(Boolean).join(', ');
  const message = error.message.slice(0, 300) || 'no message';
  return label ? `${message} (${label})` : message;
}
