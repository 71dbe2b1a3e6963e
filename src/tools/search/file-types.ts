/**
 * grep's `type` filter: file types as ripgrep names them (`rg --type-list`), with the globs of
 * ripgrep's default type definitions for common languages and formats. A type's globs are matched
 * against the file's base name, as ripgrep does.
 */
import { cutChars } from '../../shared/bounds';
export const FILE_TYPES: Readonly<Record<string, readonly string[]>> = {
  asm: ['*.asm', '*.[sS]'],
  c: ['*.[chH]', '*.[chH].in', '*.cats'],
  clojure: ['*.clj', '*.cljc', '*.cljs', '*.cljx'],
  cmake: ['*.cmake', 'CMakeLists.txt'],
  cpp: [
    '*.[ChH]',
    '*.cc',
    '*.[ch]pp',
    '*.[ch]xx',
    '*.hh',
    '*.inl',
    '*.[ChH].in',
    '*.cc.in',
    '*.[ch]pp.in',
    '*.[ch]xx.in',
    '*.hh.in',
  ],
  cs: ['*.cs'],
  css: ['*.css', '*.scss'],
  csv: ['*.csv'],
  dart: ['*.dart'],
  docker: ['*Dockerfile*'],
  elixir: ['*.ex', '*.eex', '*.exs', '*.heex', '*.leex', '*.livemd'],
  elm: ['*.elm'],
  erlang: ['*.erl', '*.hrl'],
  fsharp: ['*.fs', '*.fsx', '*.fsi'],
  go: ['*.go'],
  gradle: ['*.gradle', '*.gradle.kts'],
  graphql: ['*.graphql', '*.graphqls'],
  groovy: ['*.groovy', '*.gradle'],
  haskell: ['*.hs', '*.lhs', '*.cpphs', '*.c2hs', '*.hsc'],
  html: ['*.htm', '*.html', '*.ejs'],
  java: ['*.java', '*.jsp', '*.jspx', '*.properties'],
  js: ['*.js', '*.jsx', '*.vue', '*.cjs', '*.mjs'],
  json: ['*.json', 'composer.lock', '*.sarif'],
  jsonl: ['*.jsonl'],
  julia: ['*.jl'],
  kotlin: ['*.kt', '*.kts'],
  less: ['*.less'],
  lua: ['*.lua'],
  make: [
    '[Gg][Nn][Uu]makefile',
    '[Mm]akefile',
    '[Gg][Nn][Uu]makefile.am',
    '[Mm]akefile.am',
    '[Gg][Nn][Uu]makefile.in',
    '[Mm]akefile.in',
    '*.mk',
    '*.mak',
  ],
  markdown: ['*.markdown', '*.md', '*.mdown', '*.mdwn', '*.mkd', '*.mkdn', '*.mdx'],
  md: ['*.markdown', '*.md', '*.mdown', '*.mdwn', '*.mkd', '*.mkdn', '*.mdx'],
  nix: ['*.nix'],
  objc: ['*.h', '*.m'],
  ocaml: ['*.ml', '*.mli', '*.mll', '*.mly'],
  perl: ['*.perl', '*.pl', '*.PL', '*.plh', '*.plx', '*.pm', '*.t'],
  php: ['*.php', '*.php3', '*.php4', '*.php5', '*.php7', '*.php8', '*.pht', '*.phtml'],
  powershell: ['*.ps1', '*.psm1', '*.psd1', '*.ps1xml', '*.pssc', '*.psc1'],
  protobuf: ['*.proto'],
  py: ['*.py', '*.pyi'],
  python: ['*.py', '*.pyi'],
  r: ['*.R', '*.r', '*.Rmd', '*.Rnw'],
  ruby: ['Gemfile', '*.gemspec', '.irbrc', 'Rakefile', '*.rb'],
  rust: ['*.rs'],
  sass: ['*.sass', '*.scss'],
  scala: ['*.scala', '*.sbt'],
  sh: [
    '*.bash',
    '*.bashrc',
    '.bash_login',
    '.bash_logout',
    '.bash_profile',
    '.bashrc',
    '*.csh',
    '.cshrc',
    '*.ksh',
    '.kshrc',
    '.login',
    '.logout',
    '.profile',
    '*.sh',
    '.zlogin',
    '.zlogout',
    '.zprofile',
    '.zshenv',
    '.zshrc',
    '*.zsh',
  ],
  sql: ['*.sql', '*.psql'],
  svelte: ['*.svelte'],
  swift: ['*.swift'],
  terraform: ['*.tf', '*.tf.json', '*.tfvars'],
  tex: ['*.tex', '*.ltx', '*.cls', '*.sty', '*.bib', '*.dtx', '*.ins'],
  toml: ['*.toml', 'Cargo.lock'],
  ts: ['*.ts', '*.tsx', '*.cts', '*.mts'],
  txt: ['*.txt'],
  typescript: ['*.ts', '*.tsx', '*.cts', '*.mts'],
  vim: ['*.vim', '.vimrc', '.gvimrc', 'vimrc', 'gvimrc', '_vimrc', '_gvimrc'],
  vue: ['*.vue'],
  xml: ['*.xml', '*.xml.dist', '*.dtd', '*.xsl', '*.xslt', '*.xsd', '*.xjb', '*.rng', '*.sch', '*.xhtml'],
  yaml: ['*.yaml', '*.yml'],
  zig: ['*.zig'],
  zsh: ['.zshenv', '.zlogin', '.zlogout', '.zprofile', '.zshrc', '*.zsh'],
};

/** The accepted type names, sorted. */
export const FILE_TYPE_NAMES: readonly string[] = Object.keys(FILE_TYPES).sort();

/** The globs of a type, or undefined for a name that is not a type (`__proto__` included). */
export function fileTypeGlobs(name: string): readonly string[] | undefined {
  return Object.prototype.hasOwnProperty.call(FILE_TYPES, name) ? FILE_TYPES[name] : undefined;
}

/** The refusal for an unknown type: names the value and every accepted name. */
export function unknownFileType(name: string): string {
  const shown = name.length > 40 ? `${cutChars(name, 40, '')}…` : name; // never half a surrogate pair
  return `Unknown file type '${shown}'. Accepted types (as ripgrep names them): ${FILE_TYPE_NAMES.join(', ')}.`;
}
