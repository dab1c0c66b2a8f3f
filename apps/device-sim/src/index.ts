export { runDemo } from './demo';
export {
  SimulatedDevice,
  type PresentResult,
  type SimDeviceOptions,
  type SimDeviceType,
  type SimIdentifier,
  type SimLogEntry,
} from './device';
