import { type GatewayConfig, type GatewayConfigInput, parseGatewayConfig } from '@tollgate/core';

/** The input of each config made by `testConfig`. */
const configInputs = new WeakMap<GatewayConfig, GatewayConfigInput>();

/**
 * A test config, parsed (for the tests' own reads of it), its input kept for the testing kit: the
 * kit parses what it is given, and a parsed config's prices (micros) read again as USD would not be
 * the same prices.
 */
export function testConfig(input: GatewayConfigInput): GatewayConfig {
  const parsed = parseGatewayConfig(input);
  configInputs.set(parsed, input);
  return parsed;
}

/** The input `config` was made from by `testConfig`. */
export function inputOf(config: GatewayConfig): GatewayConfigInput {
  const input = configInputs.get(config);
  if (!input) throw new Error('make the config with testConfig(...): the testing kit takes its input');
  return input;
}
