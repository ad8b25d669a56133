/**
 * Runs an Argo CD health script the way Argo CD does: the live object as the global `obj`, the returned table's
 * `status` and `message` read back. The Lua VM is fengari (Lua 5.3 in JavaScript); the scripts keep to what Lua 5.1
 * (Argo CD's gopher-lua) also runs.
 */
import { createRequire } from 'node:module';

interface LuaApi {
  lua: {
    LUA_OK: number;
    lua_pushnil(L: unknown): void;
    lua_pushboolean(L: unknown, b: boolean): void;
    lua_pushnumber(L: unknown, n: number): void;
    lua_pushinteger(L: unknown, n: number): void;
    lua_pushstring(L: unknown, s: Uint8Array): void;
    lua_createtable(L: unknown, narr: number, nrec: number): void;
    lua_rawseti(L: unknown, idx: number, n: number): void;
    lua_setfield(L: unknown, idx: number, k: Uint8Array): void;
    lua_setglobal(L: unknown, name: Uint8Array): void;
    lua_getfield(L: unknown, idx: number, k: Uint8Array): number;
    lua_pcall(L: unknown, nargs: number, nresults: number, msgh: number): number;
    lua_tojsstring(L: unknown, idx: number): string | null;
    lua_istable(L: unknown, idx: number): boolean;
    lua_pop(L: unknown, n: number): void;
  };
  lauxlib: { luaL_newstate(): unknown; luaL_loadstring(L: unknown, s: Uint8Array): number };
  lualib: { luaL_openlibs(L: unknown): void };
  to_luastring(s: string): Uint8Array;
}

const { lua, lauxlib, lualib, to_luastring } = createRequire(import.meta.url)('fengari') as LuaApi;

function push(L: unknown, v: unknown): void {
  if (v === null || v === undefined) lua.lua_pushnil(L);
  else if (typeof v === 'boolean') lua.lua_pushboolean(L, v);
  // integers as Lua integers: gopher-lua prints a whole float64 without a fraction, Lua 5.3 floats print `1.0`
  else if (typeof v === 'number' && Number.isSafeInteger(v)) lua.lua_pushinteger(L, v);
  else if (typeof v === 'number') lua.lua_pushnumber(L, v);
  else if (typeof v === 'string') lua.lua_pushstring(L, to_luastring(v));
  else if (Array.isArray(v)) {
    lua.lua_createtable(L, v.length, 0);
    v.forEach((item, i) => {
      push(L, item);
      lua.lua_rawseti(L, -2, i + 1);
    });
  } else {
    lua.lua_createtable(L, 0, 0);
    for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
      if (item === null || item === undefined) continue;
      push(L, item);
      lua.lua_setfield(L, -2, to_luastring(k));
    }
  }
}

/** What a health script returned. */
export interface Health {
  readonly status: string;
  readonly message: string;
}

/** Runs `script` against `obj` in a fresh Lua state; throws on a Lua error or a result that is not a table. */
export function runHealth(script: string, obj: unknown): Health {
  const L = lauxlib.luaL_newstate();
  lualib.luaL_openlibs(L);
  push(L, obj);
  lua.lua_setglobal(L, to_luastring('obj'));
  if (lauxlib.luaL_loadstring(L, to_luastring(script)) !== lua.LUA_OK)
    throw new Error(`Lua does not compile: ${lua.lua_tojsstring(L, -1)}`);
  if (lua.lua_pcall(L, 0, 1, 0) !== lua.LUA_OK) throw new Error(`Lua failed: ${lua.lua_tojsstring(L, -1)}`);
  if (!lua.lua_istable(L, -1)) throw new Error('the script returned no table');
  lua.lua_getfield(L, -1, to_luastring('status'));
  const status = lua.lua_tojsstring(L, -1) ?? '';
  lua.lua_pop(L, 1);
  lua.lua_getfield(L, -1, to_luastring('message'));
  const message = lua.lua_tojsstring(L, -1) ?? '';
  return { status, message };
}
