import { AgentPlugin } from '../../src';
import { checkedDeployment, deploymentFromEnv, workerDeploymentOptions } from '../../src/worker/deployment';

test('a worker is versioned when both DURABLE_AGENT_DEPLOYMENT_NAME and DURABLE_AGENT_BUILD_ID are set, else not', () => {
  expect(deploymentFromEnv({})).toBeUndefined();
  expect(deploymentFromEnv({ DURABLE_AGENT_DEPLOYMENT_NAME: ' ', DURABLE_AGENT_BUILD_ID: '' })).toBeUndefined();
  expect(deploymentFromEnv({ DURABLE_AGENT_DEPLOYMENT_NAME: 'agents', DURABLE_AGENT_BUILD_ID: ' 0.2.0 ' })).toEqual({
    deploymentName: 'agents',
    buildId: '0.2.0',
  });
});

test('one variable without the other is an error naming the missing one', () => {
  expect(() => deploymentFromEnv({ DURABLE_AGENT_DEPLOYMENT_NAME: 'agents' })).toThrow(
    'DURABLE_AGENT_BUILD_ID is not set',
  );
  expect(() => deploymentFromEnv({ DURABLE_AGENT_BUILD_ID: '0.2.0' })).toThrow(
    'DURABLE_AGENT_DEPLOYMENT_NAME is not set',
  );
});

test('names Temporal would refuse are rejected with the setting named', () => {
  expect(() => checkedDeployment({ deploymentName: 'a.b', buildId: '1' })).toThrow(
    "deploymentName may not contain '.'",
  );
  expect(() => checkedDeployment({ deploymentName: 'a', buildId: 'x'.repeat(256) })).toThrow(
    'buildId must be a non-empty string of at most 255 characters',
  );
  expect(() => checkedDeployment({ deploymentName: 42 as unknown as string, buildId: '1' })).toThrow(
    'deploymentName must be a non-empty string',
  );
  expect(() => deploymentFromEnv({ DURABLE_AGENT_DEPLOYMENT_NAME: 'a.b', DURABLE_AGENT_BUILD_ID: '1' })).toThrow(
    "DURABLE_AGENT_DEPLOYMENT_NAME may not contain '.'",
  );
});

test('a versioned worker pins its runs to its version', () => {
  expect(workerDeploymentOptions({ deploymentName: 'agents', buildId: '0.2.0' })).toEqual({
    useWorkerVersioning: true,
    version: { deploymentName: 'agents', buildId: '0.2.0' },
    defaultVersioningBehavior: 'PINNED',
  });
});

test('AgentPlugin makes the worker versioned with its deployment, and leaves a worker that sets its own alone', () => {
  const plugin = new AgentPlugin({
    deployment: { deploymentName: 'agents', buildId: '0.2.0' },
    stickyActivities: false,
  });
  expect(plugin.configureWorker({ taskQueue: 'q' }).workerDeploymentOptions).toEqual(
    workerDeploymentOptions({ deploymentName: 'agents', buildId: '0.2.0' }),
  );
  const own = workerDeploymentOptions({ deploymentName: 'mine', buildId: '7' });
  expect(plugin.configureWorker({ taskQueue: 'q', workerDeploymentOptions: own }).workerDeploymentOptions).toBe(own);
  const unversioned = new AgentPlugin({ deployment: false, stickyActivities: false });
  expect(unversioned.configureWorker({ taskQueue: 'q' }).workerDeploymentOptions).toBeUndefined();
  expect(() =>
    new AgentPlugin({ deployment: { deploymentName: 'a.b', buildId: '1' } }).configureWorker({ taskQueue: 'q' }),
  ).toThrow("deploymentName may not contain '.'");
});
