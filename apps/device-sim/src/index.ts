export { SimulatedDevice, type SimDeviceOptions, type SimDeviceType } from './device';
