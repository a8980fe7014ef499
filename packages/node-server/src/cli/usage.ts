/** The help text of the `tollgate` binary. */
export const USAGE = `Usage: tollgate <command> [options]

Commands:
  serve [--port N] [--host ADDR] [--workers N]
                                           Start the gateway (default 127.0.0.1:8787; env PORT, HOST);
                                           --workers N runs N processes on the port (node:cluster)
  account create --name NAME [--credit-usd AMOUNT] [--monthly-limit-usd AMOUNT] [--default-rpm N] [--json]
  account suspend ID [--json]
  account unsuspend ID [--json]
  credits add --account ID --usd AMOUNT [--json]
                                           A top-up: a credit line plus the configured fee line
  key create --account ID --name NAME [--scope inference|provisioning] [--env live|test]
             [--project ID] [--spend-limit-usd AMOUNT] [--rate-limit-rpm N] [--json]
  project create --account ID --name NAME [--json]

Options for every command:
  --db URL_OR_PATH   postgres://… selects Postgres, anything else is a SQLite file
                     (env DATABASE_URL; default ./tollgate.db)
  --config FILE      the JSON config (env TOLLGATE_CONFIG; default ./tollgate.config.json,
                     else the bundled example config)
  --json             print exactly one JSON object on stdout
  -h, --help         show this help
`;
