import type { WorkerDeploymentOptions } from '@temporalio/worker';

/**
 * The Worker Deployment Version a worker belongs to (docs/upgrading.md): `deploymentName` names
 * the deployment (one per task queue's fleet, e.g. `durable-agent`), `buildId` this build of it
 * (e.g. `0.2.0` or a commit). Runs are pinned to the version that started them; a run moves to a
 * newer one only at a continue-as-new.
 */
export interface AgentDeployment {
  deploymentName: string;
  buildId: string;
}

/** Temporal's own bound on both names (the server rejects longer ones). */
const MAX_NAME_CHARS = 255;

/**
 * `DURABLE_AGENT_DEPLOYMENT_NAME` and `DURABLE_AGENT_BUILD_ID`: both set, a versioned worker; neither,
 * an unversioned one (every run on the task queue goes to any worker). One without the other, or a
 * value Temporal refuses, is an error naming the variable.
 */
export function deploymentFromEnv(env: NodeJS.ProcessEnv = process.env): AgentDeployment | undefined {
  const name = env.DURABLE_AGENT_DEPLOYMENT_NAME?.trim() || undefined;
  const buildId = env.DURABLE_AGENT_BUILD_ID?.trim() || undefined;
  if (name === undefined && buildId === undefined) return undefined;
  if (name === undefined || buildId === undefined) {
    const missing = name === undefined ? 'DURABLE_AGENT_DEPLOYMENT_NAME' : 'DURABLE_AGENT_BUILD_ID';
    throw new Error(
      `${missing} is not set: a versioned worker needs both DURABLE_AGENT_DEPLOYMENT_NAME and DURABLE_AGENT_BUILD_ID`,
    );
  }
  return checkedDeployment(
    { deploymentName: name, buildId },
    'DURABLE_AGENT_DEPLOYMENT_NAME',
    'DURABLE_AGENT_BUILD_ID',
  );
}

/** The deployment, or an error naming the setting that Temporal would refuse. */
export function checkedDeployment(
  deployment: AgentDeployment,
  nameSetting = 'deploymentName',
  buildIdSetting = 'buildId',
): AgentDeployment {
  for (const [setting, value] of [
    [nameSetting, deployment.deploymentName],
    [buildIdSetting, deployment.buildId],
  ] as const) {
    if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_NAME_CHARS) {
      throw new Error(`${setting} must be a non-empty string of at most ${MAX_NAME_CHARS} characters`);
    }
  }
  // The version's display form is `<deploymentName>.<buildId>`: a dot in the name would be ambiguous.
  if (deployment.deploymentName.includes('.')) {
    throw new Error(`${nameSetting} may not contain '.', got '${deployment.deploymentName}'`);
  }
  return { deploymentName: deployment.deploymentName.trim(), buildId: deployment.buildId.trim() };
}

/**
 * The Worker options of a versioned agent worker: its workflows are pinned to this version (a
 * run's workflow code never changes under it), and move to a newer version only when they
 * continue as new (the workflow asks for it then).
 */
export function workerDeploymentOptions(deployment: AgentDeployment): WorkerDeploymentOptions {
  return {
    useWorkerVersioning: true,
    version: { deploymentName: deployment.deploymentName, buildId: deployment.buildId },
    defaultVersioningBehavior: 'PINNED',
  };
}
