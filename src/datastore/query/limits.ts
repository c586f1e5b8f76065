// Named limits of the query language; anything past them is a 400, so no request can ask for unbounded work.

export const MAX_CLAUSES = 64;
export const MAX_OR_ALTERNATIVES = 16;
export const MAX_IN_VALUES = 256;
export const MAX_VALUE_LENGTH = 1024;
export const MAX_SELECT_PATHS = 128;
export const MAX_ORDER_KEYS = 8;
export const MAX_EXPAND = 3;
export const MAX_RANGE_INDEX = 1_000_000_000;
/** Keys passed to one expansion query (one level of one relationship field). */
export const MAX_EXPAND_KEYS = 10_000;
