/**
 * One watch stream (`GET <path>?watch=true`) with the kubeconfig's credentials and pooled agent, abortable at every
 * point by its signal. client-node's `Watch` makes its AbortController reachable only once the response headers have
 * come, so a watch the server never answers could not be stopped and kept its socket open; here the signal is the
 * request's own (node:http destroys the socket on abort).
 */
import type * as k8s from '@kubernetes/client-node';
import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';

/** Why a stream ended: `null` when the server ended it, else the HTTP status it refused with or the transport error. */
export type WatchEnd = null | { readonly statusCode: number } | Error;

/**
 * Opens the stream; `onEvent` gets each line's `type` and `object`, `onEnd` is called once, when the stream ends, is
 * refused or fails (not after `signal` aborts it: the caller ended it).
 */
export async function openWatch(
  kc: k8s.KubeConfig,
  path: string,
  params: Readonly<Record<string, string | number | boolean>>,
  signal: AbortSignal,
  onEvent: (type: string, obj: unknown) => void,
  onEnd: (end: WatchEnd) => void,
): Promise<void> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('no current cluster');
  const url = new URL(server + path);
  url.searchParams.set('watch', 'true');
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  if (signal.aborted) return;
  let ended = false;
  const end = (e: WatchEnd): void => {
    if (ended || signal.aborted) return;
    ended = true;
    onEnd(e);
  };
  const request = (url.protocol === 'http:' ? http : https).request(url, { ...opts, method: 'GET', signal }, (res) => {
    if (res.statusCode !== 200) {
      res.resume();
      end({ statusCode: res.statusCode ?? 0 });
      return;
    }
    res.setEncoding('utf8');
    const lines = createInterface({ input: res, crlfDelay: Infinity });
    lines.on('line', (line) => {
      if (ended || signal.aborted) return;
      let event: { type?: unknown; object?: unknown };
      try {
        event = JSON.parse(line) as typeof event;
      } catch {
        return; // a partial or garbled line: the stream goes on (client-node's Watch does the same)
      }
      if (typeof event.type === 'string') onEvent(event.type, event.object);
    });
    // readline re-emits the input's errors (an abort among them): without a listener they would be thrown.
    lines.on('error', (err) => end(err));
    res.on('error', (err) => end(err));
    res.on('close', () => end(null));
  });
  request.on('error', (err) => end(err));
  request.end();
}
