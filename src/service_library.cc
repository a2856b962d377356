// Intentionally empty: gives the airlock_service library a source file of its
// own, so it builds even when src/store, src/api and src/service are empty.
