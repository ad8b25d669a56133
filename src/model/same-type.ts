/**
 * Compile-time type equality, used to pin a hand-written public interface to the zod schema that validates it (the
 * published declarations carry the interface, never zod's types): `Assert<SameType<A, B>>` fails to compile unless A
 * and B are the same type, readonly and optional modifiers included.
 */
export type SameType<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Compiles only when `T` is `true`. */
export type Assert<T extends true> = T;
