// multipart/form-data through busboy, streamed: plain fields become form values exactly like
// urlencoded ones (zulip-js sends every POST as multipart); file parts are written to temporary files
// on disk as they arrive, never gathered in memory. The caller feeds chunks and applies backpressure.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import busboy from 'busboy';
import { errors, JsonableError } from './errors';
import type { UploadedFile } from './route';

export interface MultipartOptions {
  contentType: string;
  /** Where file parts go; null: file parts are drained and dropped. */
  tmpDir: string | null;
  maxFieldBytes: number;
  maxFileBytes: number;
  /**
   * Pauses or resumes the producer for one reason ('parser' or 'file'). The producer must stay paused
   * while any reason holds: a draining parser must not resume a socket the disk is still behind on.
   */
  flow(reason: 'parser' | 'file', paused: boolean): void;
}

export interface MultipartResult {
  fields: Map<string, string>;
  files: UploadedFile[];
}

/** A streaming multipart parser: write() chunks, end(), then await done. */
export class MultipartParser {
  readonly done: Promise<MultipartResult>;
  private bb: busboy.Busboy;
  private fields = new Map<string, string>();
  private files: UploadedFile[] = [];
  private pendingWrites: Promise<void>[] = [];
  private failure: JsonableError | null = null;

  constructor(private readonly opts: MultipartOptions) {
    let resolve!: (r: MultipartResult) => void;
    let reject!: (e: unknown) => void;
    this.done = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.done.catch(() => undefined); // the caller awaits; avoid an unhandled rejection meanwhile
    try {
      this.bb = busboy({
        headers: { 'content-type': opts.contentType },
        defParamCharset: 'utf8',
        limits: { fieldSize: opts.maxFieldBytes, fileSize: opts.maxFileBytes, parts: 1000, fields: 1000 },
      });
    } catch {
      throw errors.badRequest('Malformed multipart body');
    }
    this.bb.on('field', (name, value, info) => {
      if (info.valueTruncated) this.fail(errors.payloadTooLarge(opts.maxFieldBytes));
      else this.fields.set(name, value);
    });
    this.bb.on('file', (field, stream, info) => {
      if (!opts.tmpDir || this.failure) {
        stream.resume();
        return;
      }
      const file: UploadedFile = {
        field,
        filename: info.filename ?? '',
        mimeType: info.mimeType || 'application/octet-stream',
        path: path.join(opts.tmpDir, `upload-${crypto.randomBytes(12).toString('hex')}.tmp`),
        size: 0,
      };
      this.files.push(file);
      const out = fs.createWriteStream(file.path, { mode: 0o600 });
      stream.on('data', (chunk: Buffer) => {
        file.size += chunk.length;
        if (!out.write(chunk)) {
          stream.pause();
          opts.flow('file', true);
          out.once('drain', () => {
            stream.resume();
            opts.flow('file', false);
          });
        }
      });
      stream.on('limit', () => this.fail(errors.badRequest('Uploaded file is larger than the allowed limit of {max} MiB', {
        max: Math.floor(opts.maxFileBytes / 1024 / 1024),
      })));
      this.pendingWrites.push(
        new Promise<void>((res) => {
          stream.on('end', () => out.end());
          out.on('close', () => res());
          out.on('error', (err) => {
            this.fail(errors.internal());
            console.error('parley: writing upload failed', err);
            res();
          });
        }),
      );
    });
    this.bb.on('partsLimit', () => this.fail(errors.badRequest('Too many parts in multipart body')));
    this.bb.on('fieldsLimit', () => this.fail(errors.badRequest('Too many fields in multipart body')));
    this.bb.on('error', () => {
      this.fail(errors.badRequest('Malformed multipart body'));
      Promise.all(this.pendingWrites).then(() => reject(this.failure));
    });
    this.bb.on('close', () => {
      Promise.all(this.pendingWrites).then(() => {
        if (this.failure) reject(this.failure);
        else resolve({ fields: this.fields, files: this.files });
      });
    });
    this.bb.on('drain', () => opts.flow('parser', false));
  }

  private fail(err: JsonableError): void {
    this.failure ??= err;
  }

  /** Feeds one chunk (already copied out of uWS's buffer). */
  write(chunk: Buffer): void {
    if (!this.bb.write(chunk)) this.opts.flow('parser', true);
  }

  end(): void {
    this.bb.end();
  }

  /** Files written so far, to delete when the request ends. */
  tempFiles(): string[] {
    return this.files.map((f) => f.path);
  }
}
