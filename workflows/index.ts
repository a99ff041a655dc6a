/**
 * The workflow bundle's entry point (`workflowsPath`): every exported function is registered as a workflow
 * type, so export workflows only. Clients import names and types from './automation.workflow' and './ids'.
 */
export { automationWorkflow } from './automation.workflow';
