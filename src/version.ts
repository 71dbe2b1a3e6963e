/**
 * The package's version, as package.json states it (a unit test keeps the two equal). Compiled
 * in rather than read from package.json at run time, so it is the same in the repository, the
 * packed package and any bundle.
 */
export const PACKAGE_VERSION = '0.4.0';
