import { request as httpRequest, type ClientRequest } from 'node:http';

export interface UploadResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface Upload {
  /** Resolves with the answer, or with status 0 when the connection failed before one arrived. */
  result: Promise<UploadResult>;
  request: ClientRequest;
}

/**
 * A POST through node:http that writes the body in 64 KB chunks (1 KB when holding), with a
 * Content-Length or chunked. `hold` sends only that many bytes and waits for `finish()`, to
 * keep a body in flight. An early answer (413, 503) ends the upload.
 */
export const upload = (
  url: string,
  options: { body: Buffer; chunked?: boolean; headers?: Record<string, string>; hold?: number },
): Upload & { finish(): void } => {
  const { body, chunked = false, headers = {}, hold } = options;
  let answered = false;
  let release: () => void = () => {};
  const gate = hold === undefined ? Promise.resolve() : new Promise<void>((resolve) => (release = resolve));
  const request = httpRequest(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': String(body.length) }), ...headers },
  });
  const result = new Promise<UploadResult>((resolve) => {
    request.once('response', (response) => {
      answered = true;
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }));
    });
    request.once('error', () => {
      if (!answered) resolve({ status: 0, headers: {}, text: '' });
    });
  });
  const write = async () => {
    const step = hold === undefined ? 64 * 1024 : 1024;
    for (let at = 0; at < body.length && !answered; at += step) {
      if (hold !== undefined && at >= hold) await gate;
      if (answered || request.destroyed) return;
      if (!request.write(body.subarray(at, Math.min(at + step, body.length)))) await new Promise((resolve) => request.once('drain', resolve));
    }
    if (!answered && !request.destroyed) request.end();
  };
  void write().catch(() => {});
  return { result, request, finish: () => release() };
};

/** A JSON document of about `bytes` bytes: one long string field inside `shape`. */
export const jsonOfSize = (bytes: number, shape: (filler: string) => unknown): Buffer => Buffer.from(JSON.stringify(shape('x'.repeat(bytes))));
