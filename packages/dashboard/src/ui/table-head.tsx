interface Props {
  columns: readonly string[];
  /** The headings of the columns that hold numbers: right-aligned. */
  numeric?: readonly string[];
}

/** A table's row of column headings. */
export function TableHead({ columns, numeric = [] }: Props) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th key={column} scope="col" class={numeric.includes(column) ? 'num' : undefined}>
            {column}
          </th>
        ))}
      </tr>
    </thead>
  );
}
