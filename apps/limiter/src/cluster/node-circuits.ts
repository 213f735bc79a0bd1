import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import { Circuit, type CircuitOptions } from './store-circuit';

/** The circuits of one store's Redis nodes: which one guards a Redis key. */
export interface NodeCircuits {
  /** The circuit of the node that serves `redisKey`. */
  forKey(redisKey: string): Circuit;
  /** Every circuit so far, for /readyz and /metrics. */
  list(): readonly Circuit[];
  stop(): void;
}

/** `host:port`, as ioredis names a node (never the URL: it may carry a password). */
export function nodeName(client: Redis): string {
  return `${client.options.host ?? '127.0.0.1'}:${client.options.port ?? 6379}`;
}

/** A standalone server: one node, one circuit, probed on the store's own connection. */
export function standaloneCircuits(client: Redis, options: CircuitOptions): NodeCircuits {
  const circuit = new Circuit(nodeName(client), () => client.ping(), options);
  return { forKey: () => circuit, list: () => [circuit], stop: () => circuit.stop() };
}

/** Keys whose slot has no known master yet (the cluster never connected): one shared circuit. */
const UNROUTED = 'cluster';

/**
 * A Redis Cluster: one circuit per master, found by the key's slot in the client's slot map, so a
 * hung master costs only the keys of its slots. A master no longer in the slot map (its slots
 * moved after a failover) has nothing left to guard: its probe succeeds and the circuit closes.
 */
export class ClusterCircuits implements NodeCircuits {
  private readonly byNode = new Map<string, Circuit>();

  constructor(
    private readonly cluster: Cluster,
    private readonly options: CircuitOptions,
  ) {}

  forKey(redisKey: string): Circuit {
    const node = this.cluster.slots[calculateSlot(redisKey)]?.[0] ?? UNROUTED;
    let circuit = this.byNode.get(node);
    if (circuit === undefined) {
      circuit = new Circuit(node, () => this.ping(node), this.options);
      this.byNode.set(node, circuit);
    }
    return circuit;
  }

  list(): readonly Circuit[] {
    return [...this.byNode.values()];
  }

  stop(): void {
    for (const circuit of this.byNode.values()) circuit.stop();
  }

  private ping(node: string): Promise<unknown> {
    if (node === UNROUTED) return this.cluster.ping();
    const master = this.cluster.nodes('master').find((n) => nodeName(n) === node);
    if (master !== undefined) return master.ping();
    if (!this.cluster.slots.some((owners) => owners[0] === node)) return Promise.resolve();
    return Promise.reject(new Error(`Redis ${node} is not connected`));
  }
}
