/** An integer number of micro-dollars (1 USD = 1,000,000). Never a float. */
export type Micros = number;
/** Milliseconds since the Unix epoch. */
export type EpochMs = number;
