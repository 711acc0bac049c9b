// `import CoreData` on platforms without Apple's framework: the library under Core Data's own
// module name, so that a file written for Apple's Core Data compiles unchanged on Linux. Depend
// on it only where Apple's framework is absent:
//
//     .product(name: "CoreData", package: "OpenCoreData", condition: .when(platforms: [.linux]))
//
// It re-exports `OpenCoreData` (and through it Foundation): Core Data's names (`NSManagedObject`,
// `NSPersistentContainer`, `NSFetchRequest`, …) are its aliases. docs/Porting.md has the rest.
@_exported import OpenCoreData
