export { SimulatedDevice, type SimDeviceOptions, type SimDeviceType } from './device';
export { runDemo } from './demo';
