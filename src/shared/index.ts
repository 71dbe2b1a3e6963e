export * from './constants';
export * from './messages';
export * from './pricing';
export * from './run';
export * from './activity-io';
export * from './definitions';
export * from './search-attributes';
