#!/usr/bin/env python3
"""The longest C++ function definitions in a git tree's .cc and .h files: lines from the first
line of the signature to the closing brace, found by brace depth (comments, strings and raw
strings skipped; namespaces, classes and extern blocks are containers; a constructor's member
brace-inits do not end its signature). A heuristic, not a parser: macros that open braces
can fool it.
  tools/function_lengths.py [ROOT] [N]    (ROOT defaults to the current directory, N to 10)"""
import re
import subprocess
import sys

ACCESS = re.compile(r'^(public|private|protected)\s*:\s*')


def functions(text):
    out = []
    i, n, line = 0, len(text), 1
    stack = []  # 'container' | 'function' | 'block' | 'init'
    header, header_line = [], None
    func_start = []  # (start line, name) per open function

    def reset():
        nonlocal header, header_line
        header, header_line = [], None

    while i < n:
        c = text[i]
        if c == '\n':
            line += 1
            if header:
                header.append(' ')
            i += 1
            continue
        if text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
            continue
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            line += text.count('\n', i, j)
            i = j
            continue
        m = re.match(r'R"([^(\s]*)\(', text[i:i + 20])
        if m:
            end = ')' + m.group(1) + '"'
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            line += text.count('\n', i, j)
            header.append('""')
            i = j
            continue
        if c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            # A digit separator (1'000) is not a char literal: treat it as part of the number.
            if c == "'" and i > 0 and text[i - 1].isalnum() and j - i > 3:
                i += 1
                continue
            header.append(c + c)
            i = j + 1
            continue
        if c == '#' and text[text.rfind('\n', 0, i) + 1:i].strip() == '':
            # preprocessor line (with continuations)
            j = i
            while True:
                k = text.find('\n', j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] == '\\':
                    j = k + 1
                    line += 1
                    continue
                break
            i = k
            continue
        top = stack[-1] if stack else 'container'
        if c == '{':
            h = ACCESS.sub('', ''.join(header).strip())
            if top in ('container',):
                if re.search(r'\bnamespace\b', h) or h.startswith('extern'):
                    kind = 'container'
                elif re.search(r'\b(class|struct|union|enum)\b', h) and '(' not in re.sub(
                        r'template\s*<.*?>', '', h) and '=' not in h:
                    kind = 'container'
                elif re.search(r'\)\s*:', h) and re.search(r'[\w>]\s*$', h) and not re.search(
                        r'\)\s*(const|override|noexcept|final|mutable)?\s*$', h):
                    kind = 'init'  # a member brace-init in a constructor's initializer list
                elif '(' in h and not re.search(r'=\s*$', h) and not h.startswith('='):
                    kind = 'function'
                else:
                    kind = 'block'
            elif top == 'init':
                kind = 'init'
            else:
                kind = 'block'
            stack.append(kind)
            if kind == 'function':
                m = re.search(r'([\w:~<>]+|operator\S+)\s*\(', re.sub(r'template\s*<.*?>', '', h))
                func_start.append((header_line or line, m.group(1) if m else h[:40]))
            if kind != 'init':
                reset()
            else:
                header.append('{')
            i += 1
            continue
        if c == '}':
            kind = stack.pop() if stack else 'container'
            if kind == 'function':
                start, name = func_start.pop()
                out.append((line - start + 1, start, name))
            if kind == 'init':
                header.append('}')
            elif (stack[-1] if stack else 'container') == 'container':
                reset()
            i += 1
            continue
        if c == ';' and top == 'container':
            reset()
            i += 1
            continue
        if top in ('container', 'init'):
            if not c.isspace():
                if header_line is None:
                    header_line = line
                # access specifiers start no signature
                if ACCESS.match(''.join(header).strip() + c) and c == ':':
                    reset()
                    i += 1
                    continue
            if header or not c.isspace():
                header.append(c)
        i += 1
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    files = subprocess.run(['git', '-C', root, 'ls-files', '*.cc', '*.h'], capture_output=True,
                           text=True, check=True).stdout.split()
    found = []
    for f in files:
        with open(f'{root}/{f}', errors='replace') as fh:
            for length, start, name in functions(fh.read()):
                found.append((length, f, start, name))
    found.sort(key=lambda x: (-x[0], x[1], x[2]))
    for length, f, start, name in found[:count]:
        print(f'{length:6d}  {f}:{start}  {name}')


if __name__ == '__main__':
    main()
