import { registry, type Command } from '@lintel/commands';
import { evaluateGates, type Holder } from '../access/gates';

/**
 * Commands a person can run from the palette: not hidden, not a developer's tool (which the CLI keeps), not
 * the public session calls, allowed by the role and the licence.
 */
export function runnableCommands(holder: Holder | null): Command[] {
  return [...registry.values()].filter(
    (c) => !c.hidden && !c.developer && c.access !== 'public' && evaluateGates(c.gates, holder).can,
  );
}
