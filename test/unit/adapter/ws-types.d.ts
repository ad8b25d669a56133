/** Minimal types for the `ws` package (a dependency of @kubernetes/client-node, without bundled types) as used by port-forward.sandboxd.test.ts. */
declare module 'ws' {
  import type { EventEmitter } from 'node:events';
  import type { IncomingMessage, Server } from 'node:http';
  export interface WebSocket extends EventEmitter {
    readonly protocol: string;
    send(data: Buffer): void;
    close(): void;
    on(event: 'message', cb: (data: Buffer) => void): this;
    on(event: 'close', cb: () => void): this;
  }
  export class WebSocketServer extends EventEmitter {
    constructor(opts: {
      server: Server;
      handleProtocols?: (protocols: Set<string>, req: IncomingMessage) => string | false;
    });
    on(event: 'connection', cb: (ws: WebSocket, req: IncomingMessage) => void): this;
  }
}
