/** Maps gRPC status codes from sandboxd's ProcessService to AdapterErrors (error codes: `packages/sandboxd/pkg/server/process.go@v0.5.6`). */
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import type { AdapterError } from '../types.js';

export function classifyGrpcError(err: ServiceError, what: string, deadlineMs: number): AdapterError {
  const detail = err.details || err.message;
  const base = { code: err.code };
  switch (err.code) {
    case GrpcStatus.DEADLINE_EXCEEDED:
      return {
        ...base,
        category: 'timeout',
        deadlineMs,
        message: `${what}: no answer within ${deadlineMs} ms`,
        hint: 'the command or the runtime is slow or hung; the call was cancelled',
      };
    case GrpcStatus.UNAVAILABLE:
      return {
        ...base,
        category: 'unreachable',
        message: `${what}: runtime unavailable (${detail})`,
        hint: 'check that sandboxd runs and the transport reaches its gRPC port',
      };
    case GrpcStatus.CANCELLED:
      return {
        ...base,
        category: 'timeout',
        message: `${what}: cancelled before an answer within the ${deadlineMs} ms deadline (${detail})`,
      };
    case GrpcStatus.INVALID_ARGUMENT:
    case GrpcStatus.FAILED_PRECONDITION:
      return {
        ...base,
        category: 'invalid',
        message: `${what}: ${detail}`,
        hint: 'fix the command, environment or working directory',
      };
    case GrpcStatus.NOT_FOUND:
      return {
        ...base,
        category: 'not-found',
        missing: 'object',
        message: `${what}: ${detail}`,
        hint: 'the executable (or process) does not exist in the sandbox',
      };
    case GrpcStatus.PERMISSION_DENIED:
      return {
        ...base,
        category: 'forbidden',
        message: `${what}: ${detail}`,
        hint: 'paths and cwd must stay inside the runtime root directory',
      };
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return {
        ...base,
        category: 'too-large',
        message: `${what}: ${detail}`,
        hint: 'a message exceeded the size limit; for large output use Start, which streams and truncates',
      };
    case GrpcStatus.UNIMPLEMENTED:
      return {
        ...base,
        category: 'runtime',
        message: `${what}: the server does not implement process.v1.ProcessService (${detail})`,
        hint: 'check the runtime kind and port of the template',
      };
    default:
      return { ...base, category: 'runtime', message: `${what}: gRPC ${GrpcStatus[err.code] ?? err.code}: ${detail}` };
  }
}

/**
 * Whether a failed call had reached a connection: grpc-js says "No connection established" when the call never left,
 * and "Stream refused" when the server turned it away unprocessed; any other UNAVAILABLE came after it was sent.
 */
export function droppedAfterSend(err: ServiceError): boolean {
  if (err.code !== GrpcStatus.UNAVAILABLE) return false;
  const detail = err.details || err.message;
  return !/No connection established|Stream refused|ECONNREFUSED/.test(detail);
}
