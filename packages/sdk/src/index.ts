export { type BothErasHandler, type BothErasOptions, serveBothEras } from './both-eras.js';
export { type PrincipalOf, principalFromAuthInfo, principalOfAuthInfo } from './principal.js';
export { type GatedToolOptions, registerGatedTool } from './register.js';
