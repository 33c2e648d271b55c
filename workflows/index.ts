export { payment } from './payment';
export { hello } from './hello';
