import { useEffect } from 'preact/hooks';
import { clusterView, refreshStatus } from '../state.js';
import type { ReplicaInfo } from '../types.js';

/** Heartbeats come every 2 s and raise no event: while this view is open, `/status` is read as often. */
const CLUSTER_REFRESH_MS = 2000;

/**
 * The Cluster view (issue #43 item 6): the live replicas' traffic summed, then one row per replica
 * from its heartbeat — calls and errors per second, calls in flight, and each server's
 * concurrency limit in effect. `/metrics` stays per replica.
 */
export function ClusterView() {
  useEffect(() => {
    const timer = setInterval(() => void refreshStatus(), CLUSTER_REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  const view = clusterView.value;
  if (!view) return <p class="empty">This daemon runs alone (a PostgreSQL store makes it a replica of a cluster).</p>;
  const { cluster, replicas } = view;
  return (
    <section aria-labelledby="cluster-title">
      <h2 id="cluster-title">Cluster</h2>
      <p class="note" data-testid="cluster-total">
        {cluster.live} of {cluster.replicas} replicas live · {cluster.callsPerSecond} calls/s · {cluster.errorsPerSecond} errors/s · {cluster.inFlight} in flight
      </p>
      <div class="table-wrap">
        <table class="replicas">
          <thead>
            <tr>
              <th scope="col">Replica</th>
              <th scope="col">Live</th>
              <th scope="col">Calls/s</th>
              <th scope="col">Errors/s</th>
              <th scope="col">In flight</th>
              <th scope="col">Calls (errors) since start</th>
              <th scope="col">Limits: running / limit (waiting)</th>
            </tr>
          </thead>
          <tbody>
            {replicas.map((replica) => (
              <ReplicaRow key={replica.id} replica={replica} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function ReplicaRow({ replica }: { replica: ReplicaInfo }) {
  const traffic = replica.traffic;
  return (
    <tr data-replica={replica.id}>
      <th scope="row" title={replica.url}>
        {replica.id}
        {replica.self ? ' (this one)' : ''}
      </th>
      <td>{replica.live ? 'live' : `silent since ${new Date(replica.heartbeatAt).toLocaleTimeString()}`}</td>
      <td data-field="callsPerSecond">{traffic ? traffic.callsPerSecond : '–'}</td>
      <td data-field="errorsPerSecond">{traffic ? traffic.errorsPerSecond : '–'}</td>
      <td data-field="inFlight">{traffic ? traffic.inFlight : '–'}</td>
      <td data-field="calls">{traffic ? `${traffic.calls} (${traffic.errors})` : '–'}</td>
      <td data-field="limits">
        {traffic && traffic.limits.length > 0
          ? traffic.limits.map((l) => `${l.server} ${l.inFlight}/${l.limit}${l.mode === 'fixed' ? ' fixed' : ''}${l.queued > 0 ? ` (${l.queued})` : ''}`).join(', ')
          : '–'}
      </td>
    </tr>
  );
}
