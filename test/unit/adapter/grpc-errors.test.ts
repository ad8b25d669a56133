import * as grpc from '@grpc/grpc-js';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { droppedAfterSend } from '../../../src/adapter/runtime/grpc-errors.js';

// Real grpc-js calls against a raw HTTP/2 peer: the one fault sandboxd cannot be made to produce on cue is a
// connection that drops after the call was sent but before the first answer (its init) was read.
const Client = grpc.makeGenericClientConstructor(
  {
    Start: {
      path: '/process.v1.ProcessService/Start',
      requestStream: false,
      responseStream: true,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (b: Buffer) => b,
      responseDeserialize: (b: Buffer) => b,
    },
  },
  'ProcessService',
);

function call(port: number): Promise<grpc.ServiceError> {
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    Start: (req: Buffer, opts: grpc.CallOptions) => grpc.ClientReadableStream<Buffer>;
  };
  return new Promise((resolve) => {
    const stream = client.Start(Buffer.alloc(0), { deadline: Date.now() + 5000 });
    stream.on('data', () => undefined);
    stream.on('error', (err: grpc.ServiceError) => {
      client.close();
      resolve(err);
    });
  });
}

test('a call to a port nobody listens on never left: not a drop after send', async () => {
  const server = http2.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  const err = await call(port);
  expect(err.code).toBe(grpc.status.UNAVAILABLE);
  expect(droppedAfterSend(err)).toBe(false);
});

test('a connection that drops after the server took the call is a drop after send', async () => {
  const server = http2.createServer();
  let took = false;
  server.on('stream', (stream) => {
    took = true;
    stream.session?.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const err = await call((server.address() as AddressInfo).port);
    expect(took).toBe(true);
    expect(err.code).toBe(grpc.status.UNAVAILABLE);
    expect(droppedAfterSend(err)).toBe(true);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('a refused stream and a non-UNAVAILABLE status are not drops after send', () => {
  const e = (code: grpc.status, details: string): grpc.ServiceError =>
    Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });
  expect(droppedAfterSend(e(grpc.status.UNAVAILABLE, 'Stream refused by server'))).toBe(false);
  expect(droppedAfterSend(e(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'))).toBe(false);
});
