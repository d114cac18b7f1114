// The two platforms Signet signs for. The one definition: the database, services, HTTP views and
// distribution pages all use this type (the engines are the bottom layer, so everyone may import it).
export type Platform = 'ios' | 'android';
