// A page's own list of every value of an API enum (for a select, or a label per value), checked at compile time to
// name each one: a value the OpenAPI document adds then fails the type check until the page shows it.

type Missing<T, L extends readonly T[]> = Exclude<T, L[number]>;

/** `everyOf<Union>()([...])`: the list as given, or a type error naming the values it leaves out. */
export function everyOf<T>() {
  return <const L extends readonly T[]>(list: L & ([Missing<T, L>] extends [never] ? unknown : { missing: Missing<T, L> })): L => list;
}
